/*
 * exec_info: what a call reports into the dict passed as exec_info=, with GT4Py's keys
 * (call_start_time, call_run_start_time, run_start_time, run_end_time, call_run_end_time,
 * call_end_time, domain, origin; and with "__aggregate_data" true, per-stencil totals under
 * the stencil's id) and gtscript's own (run_time, backend, module_source, build_time, and
 * the backend's extras: the cpu's plan, the cuda device).
 */
#ifndef GT_CALL_EXEC_INFO_H
#define GT_CALL_EXEC_INFO_H

#include "call/call.h"

/* perf_counter seconds: the call's start, and the kernel's start and end. */
typedef struct ExecTimes {
    double call_start, run_start, run_end;
} ExecTimes;

/* Records a call that ran on b's arguments into `info`; `extra` (a dict, or NULL) is merged
 * in. False with an exception set. */
bool exec_info_record(ModuleObject *m, const Bound *b, PyObject *info, const ExecTimes *t,
                      PyObject *extra);

/* The numpy backend's (Python) call records itself through this:
 * Module._record_call(exec_info, fields, domain, call_start, run_start, run_end), with
 * `fields` and `domain` as Module.bind returned them. */
PyObject *exec_info_record_method(ModuleObject *m, PyObject *args);

#endif
