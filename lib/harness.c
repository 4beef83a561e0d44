/* harness.c: placeholder until implemented */
