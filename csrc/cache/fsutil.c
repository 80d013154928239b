#include "cache/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static char *read_fd(int fd, size_t len) {
    char *buf = malloc(len + 1);
    if (buf == NULL) return NULL;
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = EINVAL; /* shorter than its size said: changed under us */
            free(buf);
            return NULL;
        }
        got += (size_t)r;
    }
    buf[len] = '\0';
    return buf;
}

/* Reads a regular file through fd; expect == (size_t)-1 accepts any size. */
static char *read_checked(int fd, size_t expect, size_t *len) {
    struct stat sb;
    char *buf = NULL;
    if (fstat(fd, &sb) < 0) goto done;
    if (!S_ISREG(sb.st_mode)) {
        errno = ENODEV;
        goto done;
    }
    if (expect != (size_t)-1 && (size_t)sb.st_size != expect) {
        errno = EINVAL;
        goto done;
    }
    buf = read_fd(fd, (size_t)sb.st_size);
    if (buf && len) *len = (size_t)sb.st_size;
done:;
    int saved = errno;
    close(fd);
    errno = saved;
    return buf;
}

char *fs_read_path(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    return fd < 0 ? NULL : read_checked(fd, (size_t)-1, len);
}

char *fs_read_at(int dirfd, const char *name, size_t expect) {
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    return fd < 0 ? NULL : read_checked(fd, expect, NULL);
}

char *fs_read_at_most(int dirfd, const char *name, size_t max, size_t *len) {
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && (unsigned long long)sb.st_size > max) {
        close(fd);
        errno = EFBIG;
        return NULL;
    }
    return read_checked(fd, (size_t)-1, len);
}

bool fs_write_at(int dirfd, const char *name, const void *data, size_t n) {
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return false;
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            int saved = errno;
            close(fd);
            errno = saved;
            return false;
        }
        p += w;
        n -= (size_t)w;
    }
    return close(fd) == 0;
}

/* Six random characters of [a-zA-Z0-9] and a NUL into suffix; false when getrandom fails. */
static bool random_suffix(char suffix[7]) {
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char r[6];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) return false;
    for (int i = 0; i < 6; i++)
        suffix[i] = chars[r[i] % (sizeof chars - 1)];
    suffix[6] = '\0';
    return true;
}

bool fs_replace_at(int dirfd, const char *name, const void *data, size_t n) {
    char tmp[NAME_MAX + 1], suffix[7];
    for (int attempt = 0; attempt < 100; attempt++) {
        if (!random_suffix(suffix)) return false;
        if (snprintf(tmp, sizeof tmp, "%s.tmp-%s", name, suffix) >= (int)sizeof tmp) {
            errno = ENAMETOOLONG;
            return false;
        }
        if (fs_write_at(dirfd, tmp, data, n)) {
            if (renameat(dirfd, tmp, dirfd, name) == 0) return true;
            int saved = errno;
            unlinkat(dirfd, tmp, 0);
            errno = saved;
            return false;
        }
        if (errno != EEXIST) {
            int saved = errno;
            unlinkat(dirfd, tmp, 0); /* a write that failed part-way */
            errno = saved;
            return false;
        }
    }
    return false;
}

bool fs_mkdtemp_at(int dirfd, const char *prefix, char *name, size_t size) {
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[7];
        if (!random_suffix(suffix)) return false;
        if (snprintf(name, size, "%s%s", prefix, suffix) >= (int)size) {
            errno = ENAMETOOLONG;
            return false;
        }
        if (mkdirat(dirfd, name, 0700) == 0) return true;
        if (errno != EEXIST) return false;
    }
    return false;
}

/* An entry is flat, but a damaged one may hold directories (a kernel.o that is one): they are
 * removed too, down to this depth, never through a symbolic link (O_NOFOLLOW, and unlinkat
 * removes a link itself). */
enum { REMOVE_MAX_DEPTH = 8 };

static bool remove_dir_at(int dirfd, const char *name, int depth) {
    int dfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd < 0) return errno == ENOENT;
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return false;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' &&
            (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
            continue;
        if (unlinkat(dfd, de->d_name, 0) < 0 && (errno == EISDIR || errno == EPERM) &&
            depth < REMOVE_MAX_DEPTH)
            remove_dir_at(dfd, de->d_name, depth + 1);
    }
    closedir(d);
    return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT;
}

bool fs_remove_dir_at(int dirfd, const char *name) { return remove_dir_at(dirfd, name, 0); }
