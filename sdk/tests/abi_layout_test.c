#include "ncclnet/abi/net.h"
