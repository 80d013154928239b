/* The compiled-stencil object shared by module.c (build, inspection) and call/ (calls). */
#ifndef GT_MODULE_H
#define GT_MODULE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "backend/cpu/codegen.h"
#include "backend/cpu/jit.h"
#include "ir/ir.h"

typedef enum { BACKEND_CPU, BACKEND_NUMPY } Backend;

typedef struct ModuleObject {
    PyObject_HEAD
    Stencil *st;     /* analysed IR; owns every IR node */
    Backend backend;
    JitModule jit;   /* cpu: the loaded object */
    GtKernelFn kernel;
    char *llvm_ir;   /* cpu: optimised LLVM IR text, for source() */
    double build_seconds;
    const char *origin_of_code; /* "build", "memory" or "disk" */
    PyObject *dict;  /* instance __dict__ (Python subclasses add attributes) */
    PyObject *weakrefs;
} ModuleObject;

extern PyTypeObject ModuleType;

#endif
