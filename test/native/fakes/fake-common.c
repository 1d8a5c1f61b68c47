#define _GNU_SOURCE
#include "fake-common.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fake_record lib_record;
static fake_record dev_records[FAKE_MAX_DEVICES];
static unsigned dev_total;

static void parse_fields(char *line, fake_record *record) {
  memset(record, 0, sizeof *record);
  char *save = NULL;
  for (char *field = strtok_r(line, "\t", &save); field != NULL; field = strtok_r(NULL, "\t", &save)) {
    char *eq = strchr(field, '=');
    if (eq == NULL || record->count >= FAKE_MAX_FIELDS) continue;
    *eq = '\0';
    snprintf(record->keys[record->count], sizeof record->keys[0], "%s", field);
    snprintf(record->values[record->count], sizeof record->values[0], "%s", eq + 1);
    record->count++;
  }
}

/*
 * Without GPUSTACK_FAKE_DEVICES (unset or empty): the file `fake-devices` beside the library itself, so that a fake
 * placed where a driver would be on a host answers a process whose environment nobody sets (the
 * agent's DaemonSet Pod in the image e2e).
 */
static FILE *open_devices(void) {
  const char *path = getenv("GPUSTACK_FAKE_DEVICES");
  if (path != NULL && path[0] != '\0') return fopen(path, "r");
  Dl_info info;
  if (dladdr((void *)open_devices, &info) == 0 || info.dli_fname == NULL) return NULL;
  const char *slash = strrchr(info.dli_fname, '/');
  if (slash == NULL) return NULL;
  char beside[4096];
  snprintf(beside, sizeof beside, "%.*s/fake-devices", (int)(slash - info.dli_fname), info.dli_fname);
  return fopen(beside, "r");
}

unsigned fake_load(const char *mfr) {
  memset(&lib_record, 0, sizeof lib_record);
  dev_total = 0;
  FILE *file = open_devices();
  if (file == NULL) return 0;
  char line[4096];
  char lib_tag[64], dev_tag[64];
  snprintf(lib_tag, sizeof lib_tag, "lib:%s\t", mfr);
  snprintf(dev_tag, sizeof dev_tag, "dev:%s\t", mfr);
  while (fgets(line, sizeof line, file) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (strncmp(line, lib_tag, strlen(lib_tag)) == 0) {
      parse_fields(line + strlen(lib_tag), &lib_record);
    } else if (strncmp(line, dev_tag, strlen(dev_tag)) == 0 && dev_total < FAKE_MAX_DEVICES) {
      parse_fields(line + strlen(dev_tag), &dev_records[dev_total++]);
    }
  }
  fclose(file);
  return dev_total;
}

const fake_record *fake_lib(void) { return &lib_record; }

const fake_record *fake_dev(unsigned index) { return index < dev_total ? &dev_records[index] : NULL; }

unsigned fake_dev_count(void) { return dev_total; }

static const char *lookup(const fake_record *record, const char *key) {
  if (record == NULL) return NULL;
  for (int i = 0; i < record->count; i++) {
    if (strcmp(record->keys[i], key) == 0) return record->values[i];
  }
  return NULL;
}

int fake_has(const fake_record *record, const char *key) { return lookup(record, key) != NULL; }

const char *fake_str(const fake_record *record, const char *key, const char *fallback) {
  const char *value = lookup(record, key);
  return value ? value : fallback;
}

long long fake_int(const fake_record *record, const char *key, long long fallback) {
  const char *value = lookup(record, key);
  return value ? strtoll(value, NULL, 0) : fallback;
}

unsigned long long fake_u64(const fake_record *record, const char *key, unsigned long long fallback) {
  const char *value = lookup(record, key);
  return value ? strtoull(value, NULL, 0) : fallback;
}

static int list_contains(const char *list, const char *what) {
  if (list == NULL) return 0;
  size_t length = strlen(what);
  for (const char *p = list; (p = strstr(p, what)) != NULL; p += length) {
    int starts = p == list || p[-1] == ',';
    int ends = p[length] == '\0' || p[length] == ',';
    if (starts && ends) return 1;
  }
  return 0;
}

int fake_fails(const fake_record *record, const char *what) { return list_contains(lookup(record, "fail"), what); }

int fake_copy(char *buffer, unsigned size, const char *text, const fake_record *record, const char *what) {
  if (size == 0) return -1;
  if (list_contains(lookup(record, "unterminated"), what)) {
    memset(buffer, 'X', size);
    return 0;
  }
  if (strlen(text) + 1 > size) return -1;
  memcpy(buffer, text, strlen(text) + 1);
  return 0;
}

void fake_bdf(const char *text, unsigned *domain, unsigned *bus, unsigned *device, unsigned *function) {
  *domain = *bus = *device = *function = 0;
  if (sscanf(text, "%x:%x:%x.%x", domain, bus, device, function) != 4) {
    sscanf(text, "%x:%x.%x", bus, device, function);
  }
}

void fake_trace(const char *symbol) {
  const char *path = getenv("GPUSTACK_FAKE_TRACE");
  if (path == NULL || *path == '\0') return;
  FILE *file = fopen(path, "a");
  if (file == NULL) return;
  fprintf(file, "%s\n", symbol);
  fclose(file);
}
