/* fuzz-record.h: the libFuzzer entry point, shared by the replay driver. */
#ifndef BB_FUZZ_RECORD_H
#define BB_FUZZ_RECORD_H
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
