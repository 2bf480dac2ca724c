/* test_gather_scatter */
#include "test.h"
