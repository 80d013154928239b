/*
 * Field arguments that name their dimensions (xarray's DataArray and Variable: a `dims`
 * tuple) are still matched to the stencil's axes by position (I, J, K, then data
 * dimensions), like every array. Two such arguments that put the same dimension name on
 * different axes (`add(a, b.transpose(...), out)`) would be combined point by point in the
 * wrong places, so the call refuses them; different names (staggered grids: "x" and
 * "x_interface") are not compared.
 */
#ifndef GT_CALL_NAMED_DIMS_H
#define GT_CALL_NAMED_DIMS_H

#include "call/call.h"

/* Checks the arguments bound to st's fields (b->value, before conversion to arrays): false
 * with a ValueError naming both arguments, their dims and the name they disagree on. */
bool named_dims_check(const Stencil *st, const Bound *b);

#endif
