/* ops_shape.c — bindings of views and shape ops (view, reshape, permute, cat, ...)
 * as Tensor methods and module functions. */
#include "bind.h"

PyMethodDef cgpy_shape_methods[] = {CGPY_TABLE_END};
PyMethodDef cgpy_shape_functions[] = {CGPY_TABLE_END};
