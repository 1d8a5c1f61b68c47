/*
 * Shared helpers of the fake vendor libraries. Each fake serves the devices listed for
 * its manufacturer in the file named by GPUSTACK_FAKE_DEVICES (else `fake-devices` beside the
 * library), re-read on every init so
 * one process can run many scenarios. Line format (fields separated by TAB):
 *
 *   lib:<mfr>  key=value ...   library-wide answers (init, count, driver, runtime, ...)
 *   dev:<mfr>  key=value ...   one device, in enumeration order
 *
 * Values are raw vendor answers (memory in the vendor's own unit), so the addon's unit
 * conversion is what the tests check. When GPUSTACK_FAKE_TRACE names a file, every
 * exported call appends its symbol name there, which lets tests see which of a
 * versioned/unversioned pair was used.
 */
#ifndef GPUSTACK_FAKE_COMMON_H
#define GPUSTACK_FAKE_COMMON_H

#include <stdint.h>

#define FAKE_EXPORT __attribute__((visibility("default")))
#define FAKE_MAX_FIELDS 32
#define FAKE_MAX_DEVICES 64

typedef struct {
  int count;
  char keys[FAKE_MAX_FIELDS][32];
  char values[FAKE_MAX_FIELDS][256];
} fake_record;

/* Loads the records of `mfr`; returns the number of devices. */
unsigned fake_load(const char *mfr);
const fake_record *fake_lib(void);
const fake_record *fake_dev(unsigned index); /* NULL when out of range */
unsigned fake_dev_count(void);

int fake_has(const fake_record *record, const char *key);
const char *fake_str(const fake_record *record, const char *key, const char *fallback);
long long fake_int(const fake_record *record, const char *key, long long fallback);
unsigned long long fake_u64(const fake_record *record, const char *key, unsigned long long fallback);
/* True when the comma-separated `fail` field of the record names `what`. */
int fake_fails(const fake_record *record, const char *what);

/* Copies `text` into a caller buffer of `size` bytes. Returns 0, or -1 if it does not
 * fit. With the record's `unterminated` field naming `what`, fills the whole buffer with
 * no NUL at all, like a hostile library would. */
int fake_copy(char *buffer, unsigned size, const char *text, const fake_record *record, const char *what);

/* Parses [domain:]bus:device.function. */
void fake_bdf(const char *text, unsigned *domain, unsigned *bus, unsigned *device, unsigned *function);

void fake_trace(const char *symbol);
#define FAKE_TRACE() fake_trace(__func__)

#endif
