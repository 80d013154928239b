/* Streaming stores (stream.h): which fields, and the pass over the optimised module. */
#include "backend/cpu/stream.h"

#include <stdlib.h>
#include <string.h>

#include <llvm-c/Target.h>

#include "backend/cpu/jit.h"

bool cpu_streaming_supported(void) {
    const char *triple = jit_target_id();
    return strncmp(triple, "x86_64", 6) == 0 && jit_has_asm_parser();
}

int cpu_streamed_bytes(const Stencil *st, CpuVariant variant) {
    if (variant.shared || variant.layout == LAYOUT_GENERIC || !cpu_streaming_supported()) return 0;
    int unit = variant.layout == LAYOUT_K_UNIT ? AX_K : AX_I, bytes = 0;
    for (int i = 0; i < st->nparams; i++)
        if (cpu_streamed_field(st->params[i]) && (st->params[i]->axes & unit))
            bytes += dtype_size(st->params[i]->dtype);
    return bytes;
}

typedef struct Pass {
    LLVMContextRef ctx;
    LLVMModuleRef mod;
    LLVMBuilderRef b;
    LLVMTargetDataRef td;
    LLVMTypeRef i64;
    unsigned nt_kind;
    LLVMValueRef nt_node; /* !{i32 1} */
    const bool *streamed; /* per slot */
    int nslots;
} Pass;

/* The value a pointer is derived from through address arithmetic (the part's parameter of
 * a field), or NULL when it is derived otherwise (a phi, a select: left alone). */
static LLVMValueRef pointer_root(LLVMValueRef p) {
    for (int depth = 0; p && depth < 64; depth++) {
        if (LLVMIsAArgument(p)) return p;
        if (LLVMIsAGetElementPtrInst(p) ||
            (LLVMIsAConstantExpr(p) && LLVMGetConstOpcode(p) == LLVMGetElementPtr))
            p = LLVMGetOperand(p, 0);
        else
            return NULL;
    }
    return NULL;
}

/* How a store into a streamed field streams, or 0 when it is not one (or volatile, atomic,
 * of another element size than 4 or 8 bytes): SCALAR_NT for a scalar, written by movnti;
 * for a vector its alignment for one non-temporal store (its size, at most a cache line;
 * a vector of a size that is no power of two gets 1: never aligned, written element by
 * element). Every store into the field streams when the plan says so, the unaligned ones
 * element by element: a line written partly by plain stores and partly by non-temporal
 * ones is read for the plain ones and flushed half-written for the others, both slow. */
enum { SCALAR_NT = 1 << 20 };

static unsigned element_bytes(const Pass *ps, LLVMTypeRef t) {
    LLVMTypeKind k = LLVMGetTypeKind(t);
    if (k != LLVMDoubleTypeKind && k != LLVMFloatTypeKind && k != LLVMIntegerTypeKind) return 0;
    unsigned long long n = LLVMStoreSizeOfType(ps->td, t);
    return n == 4 || n == 8 ? (unsigned)n : 0;
}

static unsigned stream_kind(const Pass *ps, LLVMValueRef fn, LLVMValueRef st) {
    if (!LLVMIsAStoreInst(st) || LLVMGetVolatile(st) ||
        LLVMGetOrdering(st) != LLVMAtomicOrderingNotAtomic)
        return 0;
    LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(st, 0));
    unsigned kind;
    if (LLVMGetTypeKind(t) == LLVMVectorTypeKind) {
        if (element_bytes(ps, LLVMGetElementType(t)) == 0) return 0;
        unsigned long long bytes = LLVMStoreSizeOfType(ps->td, t);
        kind = (bytes & (bytes - 1)) != 0 ? 1 : bytes < 64 ? (unsigned)bytes : 64;
    } else {
        if (element_bytes(ps, t) == 0) return 0;
        kind = SCALAR_NT;
    }
    LLVMValueRef root = pointer_root(LLVMGetOperand(st, 1));
    if (root == NULL) return 0;
    for (int s = 0; s < ps->nslots; s++)
        if (ps->streamed[s] && LLVMGetParam(fn, (unsigned)s) == root) return kind;
    return 0;
}

/* movnti of a 4- or 8-byte scalar at ptr (inline assembly: LLVM turns a non-temporal store
 * of a bitcast float back into a plain floating-point store). */
static void build_movnti(Pass *ps, LLVMValueRef value, LLVMValueRef ptr) {
    LLVMBuilderRef b = ps->b;
    bool wide = element_bytes(ps, LLVMTypeOf(value)) == 8;
    LLVMTypeRef it = wide ? ps->i64 : LLVMInt32TypeInContext(ps->ctx);
    if (LLVMGetTypeKind(LLVMTypeOf(value)) != LLVMIntegerTypeKind)
        value = LLVMBuildBitCast(b, value, it, "");
    LLVMTypeRef params[2] = {LLVMTypeOf(ptr), it};
    LLVMTypeRef fty = LLVMFunctionType(LLVMVoidTypeInContext(ps->ctx), params, 2, 0);
    const char *text = wide ? "movntiq $1, ($0)" : "movntil $1, ($0)";
    const char *cons = "r,r,~{memory}";
    LLVMValueRef as = LLVMGetInlineAsm(fty, text, strlen(text), cons, strlen(cons), 1, 0,
                                       LLVMInlineAsmDialectATT, 0);
    LLVMValueRef args[2] = {ptr, value};
    LLVMBuildCall2(b, fty, as, args, 2, "");
}

/* A vector's elements, each by movnti. */
static void build_movnti_elements(Pass *ps, LLVMValueRef value, LLVMValueRef ptr) {
    LLVMBuilderRef b = ps->b;
    LLVMTypeRef et = LLVMGetElementType(LLVMTypeOf(value));
    unsigned n = LLVMGetVectorSize(LLVMTypeOf(value));
    for (unsigned e = 0; e < n; e++) {
        LLVMValueRef idx = LLVMConstInt(ps->i64, e, 0);
        LLVMValueRef at = LLVMBuildGEP2(b, et, ptr, &idx, 1, "");
        build_movnti(ps, LLVMBuildExtractElement(b, value, idx, ""), at);
    }
}

/* Rebuilds the phis of `succ` that name `from` as a predecessor with `to` instead (LLVM-C
 * cannot change a phi's incoming block in place). */
static void retarget_phis(Pass *ps, LLVMBasicBlockRef succ, LLVMBasicBlockRef from,
                          LLVMBasicBlockRef to) {
    for (LLVMValueRef phi = LLVMGetFirstInstruction(succ), next; phi && LLVMIsAPHINode(phi);
         phi = next) {
        next = LLVMGetNextInstruction(phi);
        unsigned n = LLVMCountIncoming(phi);
        bool names = false;
        for (unsigned k = 0; k < n; k++) names |= LLVMGetIncomingBlock(phi, k) == from;
        if (!names) continue;
        LLVMPositionBuilderBefore(ps->b, phi);
        LLVMValueRef np = LLVMBuildPhi(ps->b, LLVMTypeOf(phi), "");
        for (unsigned k = 0; k < n; k++) {
            LLVMValueRef v = LLVMGetIncomingValue(phi, k);
            LLVMBasicBlockRef bb = LLVMGetIncomingBlock(phi, k);
            if (bb == from) bb = to;
            LLVMAddIncoming(np, &v, &bb, 1);
        }
        LLVMReplaceAllUsesWith(phi, np);
        LLVMInstructionEraseFromParent(phi);
    }
}

/* Moves everything after `at` in its block into a new block placed after it, the successors'
 * phis following; returns the new block. */
static LLVMBasicBlockRef split_after(Pass *ps, LLVMValueRef fn, LLVMValueRef at) {
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(at);
    LLVMBasicBlockRef rest = LLVMAppendBasicBlockInContext(ps->ctx, fn, "stream.cont");
    LLVMMoveBasicBlockAfter(rest, bb);
    LLVMPositionBuilderAtEnd(ps->b, rest);
    for (LLVMValueRef i = LLVMGetNextInstruction(at), next; i; i = next) {
        next = LLVMGetNextInstruction(i);
        LLVMInstructionRemoveFromParent(i);
        LLVMInsertIntoBuilder(ps->b, i);
    }
    LLVMValueRef term = LLVMGetBasicBlockTerminator(rest);
    unsigned n = LLVMGetNumSuccessors(term);
    for (unsigned s = 0; s < n; s++) {
        LLVMBasicBlockRef succ = LLVMGetSuccessor(term, s);
        bool seen = false; /* a block reached twice (a switch) is rebuilt once */
        for (unsigned t = 0; t < s; t++) seen |= LLVMGetSuccessor(term, t) == succ;
        if (!seen) retarget_phis(ps, succ, bb, rest);
    }
    return rest;
}

/* `st` becomes: if (!on) the store itself; else a scalar by movnti, a vector by one
 * non-temporal store where its address is aligned to it, element by element elsewhere. */
static void make_conditional(Pass *ps, LLVMValueRef fn, LLVMValueRef st, unsigned kind,
                             LLVMValueRef on) {
    LLVMBuilderRef b = ps->b;
    LLVMBasicBlockRef bb = LLVMGetInstructionParent(st);
    LLVMBasicBlockRef rest = split_after(ps, fn, st);
    LLVMValueRef value = LLVMGetOperand(st, 0), ptr = LLVMGetOperand(st, 1);
    LLVMInstructionRemoveFromParent(st);
    LLVMBasicBlockRef nt = LLVMAppendBasicBlockInContext(ps->ctx, fn, "stream.nt");
    LLVMBasicBlockRef plain = LLVMAppendBasicBlockInContext(ps->ctx, fn, "stream.plain");
    LLVMMoveBasicBlockAfter(nt, bb);
    LLVMMoveBasicBlockAfter(plain, nt);
    LLVMPositionBuilderAtEnd(b, bb);
    LLVMBuildCondBr(b, on, nt, plain);
    LLVMPositionBuilderAtEnd(b, plain);
    LLVMInsertIntoBuilder(b, st);
    LLVMBuildBr(b, rest);
    LLVMPositionBuilderAtEnd(b, nt);
    if (kind == SCALAR_NT) {
        build_movnti(ps, value, ptr);
    } else if (kind == 1) {
        build_movnti_elements(ps, value, ptr);
    } else {
        LLVMBasicBlockRef whole = LLVMAppendBasicBlockInContext(ps->ctx, fn, "stream.vector");
        LLVMBasicBlockRef parts = LLVMAppendBasicBlockInContext(ps->ctx, fn, "stream.elements");
        LLVMMoveBasicBlockAfter(whole, nt);
        LLVMMoveBasicBlockAfter(parts, whole);
        LLVMValueRef low = LLVMBuildAnd(b, LLVMBuildPtrToInt(b, ptr, ps->i64, ""),
                                        LLVMConstInt(ps->i64, kind - 1, 0), "");
        LLVMBuildCondBr(b, LLVMBuildICmp(b, LLVMIntEQ, low, LLVMConstInt(ps->i64, 0, 0), "aligned"),
                        whole, parts);
        LLVMPositionBuilderAtEnd(b, parts);
        build_movnti_elements(ps, value, ptr);
        LLVMBuildBr(b, rest);
        LLVMPositionBuilderAtEnd(b, whole);
        LLVMValueRef ns = LLVMBuildStore(b, value, ptr);
        LLVMSetAlignment(ns, kind);
        LLVMSetMetadata(ns, ps->nt_kind, ps->nt_node);
    }
    LLVMBuildBr(b, rest);
}

/* Whether the part streams: tile[4] & GT_TILE_STREAM, loaded at its entry. */
static LLVMValueRef load_flag(Pass *ps, LLVMValueRef fn) {
    LLVMBuilderRef b = ps->b;
    LLVMPositionBuilderBefore(b, LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(fn)));
    LLVMValueRef four = LLVMConstInt(ps->i64, 4, 0);
    LLVMValueRef at = LLVMBuildInBoundsGEP2(b, ps->i64, LLVMGetParam(fn, (unsigned)ps->nslots + 3),
                                            &four, 1, "");
    LLVMValueRef flags = LLVMBuildLoad2(b, ps->i64, at, "tile_flags");
    LLVMValueRef bit = LLVMBuildAnd(b, flags, LLVMConstInt(ps->i64, GT_TILE_STREAM, 0), "");
    return LLVMBuildICmp(b, LLVMIntNE, bit, LLVMConstInt(ps->i64, 0, 0), "streaming");
}

/* Before each return of fn: a store fence (sfence), so the non-temporal stores are visible
 * once the part has returned. */
static void fence_returns(Pass *ps, LLVMValueRef fn) {
    const char *name = "llvm.x86.sse.sfence";
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef sfence = LLVMGetIntrinsicDeclaration(ps->mod, id, NULL, 0);
    LLVMTypeRef sfence_ty = LLVMIntrinsicGetType(ps->ctx, id, NULL, 0);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb)) {
        LLVMValueRef term = LLVMGetBasicBlockTerminator(bb);
        if (term == NULL || !LLVMIsAReturnInst(term)) continue;
        LLVMPositionBuilderBefore(ps->b, term);
        LLVMBuildCall2(ps->b, sfence_ty, sfence, NULL, 0, "");
    }
}

/* One part: its stores to stream, then the rewrite. */
typedef struct Found {
    LLVMValueRef store;
    unsigned kind;
} Found;

static int stream_function(Pass *ps, LLVMValueRef fn) {
    int n = 0, cap = 0;
    Found *found = NULL;
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
        for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) {
            unsigned kind = stream_kind(ps, fn, i);
            if (kind == 0) continue;
            if (n == cap) {
                int nc = cap ? 2 * cap : 8;
                Found *f = realloc(found, sizeof *f * (size_t)nc);
                if (f == NULL) goto done; /* no memory: the stores found so far */
                found = f;
                cap = nc;
            }
            found[n++] = (Found){i, kind};
        }
done:
    if (n > 0) {
        LLVMValueRef on = load_flag(ps, fn);
        for (int k = 0; k < n; k++) make_conditional(ps, fn, found[k].store, found[k].kind, on);
        fence_returns(ps, fn);
    }
    free(found);
    return n;
}

int cpu_stream_stores(LLVMModuleRef mod, const Stencil *st, CpuVariant variant) {
    if (cpu_streamed_bytes(st, variant) == 0) return 0;
    int nslots = stencil_nslots(st);
    bool *streamed = calloc((size_t)nslots + 1, sizeof *streamed);
    if (streamed == NULL) return 0; /* plain stores: the same results */
    for (int i = 0; i < st->nparams; i++)
        if (cpu_streamed_field(st->params[i])) streamed[st->params[i]->slot] = true;
    Pass ps = {.ctx = LLVMGetModuleContext(mod), .mod = mod, .streamed = streamed, .nslots = nslots};
    ps.b = LLVMCreateBuilderInContext(ps.ctx);
    ps.td = LLVMGetModuleDataLayout(mod);
    ps.i64 = LLVMInt64TypeInContext(ps.ctx);
    ps.nt_kind = LLVMGetMDKindIDInContext(ps.ctx, "nontemporal", 11);
    LLVMMetadataRef one = LLVMValueAsMetadata(LLVMConstInt(LLVMInt32TypeInContext(ps.ctx), 1, 0));
    ps.nt_node = LLVMMetadataAsValue(ps.ctx, LLVMMDNodeInContext2(ps.ctx, &one, 1));
    int total = 0;
    for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
        size_t len;
        const char *name = LLVMGetValueName2(fn, &len);
        if (LLVMIsDeclaration(fn) || len < 7 || strncmp(name, "gt_part", 7) != 0) continue;
        if (LLVMCountParams(fn) < (unsigned)nslots + 4) continue;
        total += stream_function(&ps, fn);
    }
    LLVMDisposeBuilder(ps.b);
    free(streamed);
    return total;
}
