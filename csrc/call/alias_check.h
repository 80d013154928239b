/*
 * Aliased arguments that cannot race: an output and an input passed the same points of one
 * array (the same memory at the same positions), where the input is read around each point
 * or at other K levels, so that the general aliasing rule refuses the call. Such a call is
 * still accepted when its result provably equals the result with a separate copy of the
 * input, whatever order the points are computed in: halo corner fills in place
 * (`fill(q, q)` writing a few corner points from other points of q).
 *
 * The argument. A point of the output is stored only by the statements run at that point
 * (writes at K offsets or data indices are refused). Give every point of the domain's index
 * space a state, by following the statements in program order (analysis/aliasing.h): `dirty`
 * from the first statement that may store there a value other than the one the input had,
 * for good (a backend may have read the point ahead); storing exactly that value (a copy of
 * the input at the point, of the output while clean, or of a temporary holding such a copy,
 * never one stored at a K offset) changes nothing. With a separate copy, every read of the
 * input sees the original value; in place it does too when
 *   - a read at the point itself by a statement writing an argument field on the domain
 *     (outside guards and while loops: run once per point, after the statements before it
 *     there) finds the point clean at that moment, and
 *   - every other read of the input (at an offset, at another or a variable K level, in a
 *     guard or a while loop, or computing a temporary, which backends may compute on an
 *     extended domain, recompute per tile or inline into later statements) reaches no point
 *     that is ever dirty.
 * Then every value computed is the same as with the copy, in any order of the points; reads
 * of the output itself see the same stores either way. Points are grouped into boxes whose
 * edges are the statements' extents, region bounds and interval bounds resolved for the call,
 * so the work does not grow with the domain. Only the slow path of a call that aliases runs it.
 */
#ifndef GT_CALL_ALIAS_CHECK_H
#define GT_CALL_ALIAS_CHECK_H

#include "call/call.h"

/* For written field w and read-only field r whose arrays put every point at the same address
 * (call.c's same_points): 1 when the call's result cannot depend on the order of the points
 * (above), 0 when it may (or the check cannot tell: refuse), -1 with MemoryError set. */
int alias_order_free(const Stencil *st, const Bound *b, const Symbol *w, const Symbol *r);

#endif
