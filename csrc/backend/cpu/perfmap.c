/* open_memstream, O_NOFOLLOW and O_CLOEXEC are POSIX 2008; the core builds with -std=c11. */
#define _POSIX_C_SOURCE 200809L

#include "backend/cpu/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm-c/Object.h>

#include "backend/cpu/jit.h"

/* -1: not read yet; 0 or 1 after. Loads run under the JIT's lock, which orders the first
 * read; a racing second read would store the same value. */
static int enabled = -1;
static bool warned;

bool perfmap_enabled(void) {
    if (enabled < 0) {
        const char *v = getenv("GTSCRIPT_PERF_MAP");
        enabled = v != NULL && strcmp(v, "1") == 0;
        if (v != NULL && v[0] != '\0' && strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            fprintf(stderr, "gtscript: GTSCRIPT_PERF_MAP=%s is neither 0 nor 1: no perf map\n", v);
    }
    return enabled == 1;
}

static void warn(const char *what, const char *detail) {
    if (warned) return;
    warned = true;
    fprintf(stderr, "gtscript: GTSCRIPT_PERF_MAP: %s%s%s (no perf map for JIT code)\n", what,
            detail ? ": " : "", detail ? detail : "");
}

/* /tmp/perf-<pid>.map, opened to append. Not through a symbolic link (another user could
 * have planted one in /tmp) and only a regular file of ours: perf reads only such maps, and
 * we write nowhere else. */
static int open_map(void) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        warn(path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        warn(path, "not a regular file of this user");
        close(fd);
        return -1;
    }
    return fd;
}

typedef struct {
    const char *contents; /* the section's bytes in the object: identifies the section */
    uint64_t value;       /* offset of the symbol in its section */
} Place;

/* Where symbol `sym` lies; contents NULL for a symbol outside any section (the file symbol,
 * absolute and undefined symbols). */
static Place place_of(LLVMBinaryRef bin, LLVMSymbolIteratorRef sym, LLVMSectionIteratorRef sec) {
    LLVMMoveToContainingSection(sec, sym);
    Place p = {NULL, LLVMGetSymbolAddress(sym)};
    if (!LLVMObjectFileIsSectionIteratorAtEnd(bin, sec)) p.contents = LLVMGetSectionContents(sec);
    return p;
}

static void record(LLVMBinaryRef bin, const void *kernel) {
    LLVMSymbolIteratorRef sym = LLVMObjectFileCopySymbolIterator(bin);
    LLVMSectionIteratorRef sec = LLVMObjectFileCopySectionIterator(bin);
    char *lines = NULL;
    size_t len = 0;
    FILE *out = NULL;
    if (sym == NULL || sec == NULL) goto done;
    /* First pass: the stencil's name (the file symbol, named after the LLVM module) and the
     * kernel's place, from which the other functions' addresses follow. */
    const char *stencil = NULL;
    Place k = {NULL, 0};
    for (; !LLVMObjectFileIsSymbolIteratorAtEnd(bin, sym); LLVMMoveToNextSymbol(sym)) {
        const char *name = LLVMGetSymbolName(sym);
        if (name == NULL || name[0] == '\0') continue;
        Place p = place_of(bin, sym, sec);
        if (p.contents == NULL && LLVMGetSymbolSize(sym) == 0 && stencil == NULL) stencil = name;
        if (strcmp(name, GT_KERNEL_SYMBOL) == 0) k = p;
    }
    if (k.contents == NULL) {
        warn("the object file has no kernel symbol", NULL);
        goto done;
    }
    out = open_memstream(&lines, &len);
    if (out == NULL) goto done;
    LLVMDisposeSymbolIterator(sym);
    sym = LLVMObjectFileCopySymbolIterator(bin);
    if (sym == NULL) goto done;
    for (; !LLVMObjectFileIsSymbolIteratorAtEnd(bin, sym); LLVMMoveToNextSymbol(sym)) {
        const char *name = LLVMGetSymbolName(sym);
        uint64_t size = LLVMGetSymbolSize(sym);
        if (name == NULL || name[0] == '\0' || size == 0) continue;
        Place p = place_of(bin, sym, sec);
        if (p.contents != k.contents) continue; /* another section: its load address is unknown */
        uintptr_t addr = (uintptr_t)kernel - (uintptr_t)k.value + (uintptr_t)p.value;
        fprintf(out, "%lx %lx gtscript:%s:%s\n", (unsigned long)addr, (unsigned long)size,
                stencil ? stencil : "?", name);
    }
    if (fclose(out) != 0) {
        out = NULL;
        goto done;
    }
    out = NULL;
    /* One write per load: lines of loads in other threads or processes do not interleave. */
    int fd = open_map();
    if (fd >= 0) {
        ssize_t n = write(fd, lines, len);
        if (n < 0 || (size_t)n != len) warn("cannot write the perf map", n < 0 ? strerror(errno) : "short write");
        close(fd);
    }
done:
    if (out) fclose(out);
    free(lines);
    if (sym) LLVMDisposeSymbolIterator(sym);
    if (sec) LLVMDisposeSectionIterator(sec);
}

void perfmap_record(const char *obj, size_t objlen, const void *kernel) {
    LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(obj, objlen, "gtscript-kernel", 0);
    if (buf == NULL) return;
    char *msg = NULL;
    LLVMBinaryRef bin = LLVMCreateBinary(buf, NULL, &msg);
    if (bin == NULL) {
        warn("cannot read the object file", msg);
        LLVMDisposeMessage(msg);
    } else {
        record(bin, kernel);
        LLVMDisposeBinary(bin);
    }
    LLVMDisposeMemoryBuffer(buf);
}
