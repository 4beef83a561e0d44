/* cli.c: placeholder until implemented */
