/* test_logic.c */
#include "opcheck.h"
