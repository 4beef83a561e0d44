/* topo.c: placeholder until implemented */
