/* redist-tags.h: every MPI tag sent on a redistribution link's communicator
 * (bb_redist_link_comm), for every layer that sends on it.  The library's
 * protocol, bbench-redist's bound probe and the md workload's replicated
 * baseline all use that one communicator, so their tags must differ: they
 * are allocated here, once, in a header the library and bbench-redist both
 * include (neither installed nor exported: a user of the installed library
 * learns the library's tags from bbench.h). */
#ifndef BB_REDIST_TAGS_H
#define BB_REDIST_TAGS_H

typedef enum bb_link_tag {
    BB_TAG_RECV_DIST = 51,      /* lib: once the recv_dist flag, root to
                                   root (now a field of the handshake's
                                   one agreement; kept reserved) */
    BB_TAG_PAYLOAD = 52,        /* lib: sparse's and overlap's Isend/Irecv
                                   and the root methods' root-to-root
                                   message */
    BB_TAG_BOUND_PING = 53,     /* bench/redist/bound.c: the bound's ping-pongs */
    BB_TAG_CALIBRATE = 54,      /* lib: once auto's calibration (retired; kept reserved) */
    BB_TAG_MD_REPLICATED = 55   /* bench/redist/md.c: the replicated
                                   baseline's root-to-root messages */
} bb_link_tag_t;

#endif
