/* record.c: placeholder until implemented */
