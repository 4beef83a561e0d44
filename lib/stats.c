/* stats.c: placeholder until implemented */
