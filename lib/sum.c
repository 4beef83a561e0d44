/* sum.c: placeholder until implemented */
