/* Human-readable IR, shown by Stencil.ir(). */
#ifndef GT_PRINT_H
#define GT_PRINT_H

#include "ir/ir.h"
#include "util/strbuf.h"

void ir_print(const Stencil *st, StrBuf *out);
void ir_print_expr(const Expr *e, StrBuf *out);

#endif
