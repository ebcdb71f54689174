int ncclnet_dummy;
