/* views_internal.h — internal: helpers shared by the view and shape-op files. */
#ifndef CG_VIEWS_INTERNAL_H
#define CG_VIEWS_INTERNAL_H

#include "../dispatch/dispatch_internal.h"

/* Create a view of x with the given geometry and, when x requires grad, a node
 * named node_name whose backward is `backward` (iattr copied to node->iattr). */
cg_tensor *cg_make_view(cg_tensor *x, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                        const char *node_name, cg_backward_fn backward, const int64_t *iattr, int niattr);
/* Backward of shape-only views: reshape the gradient to the input's shape. */
cg_status cg_view_reshape_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin);

#endif
