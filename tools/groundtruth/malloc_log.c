// LD_PRELOAD malloc log for tools/groundtruth/piece_holders.py: every malloc, calloc, realloc, free and
// posix_memalign/memalign/aligned_alloc as (op, a, b, c) records of four uint64, written to $MLOG_OUT at exit.
// Logging starts at the first phase mark: malloc(987654000 + k) records mark k and returns NULL.
// op: 1 malloc(a) = b, 2 free(a), 3 memalign(align c, size a) = b, 4 calloc(a bytes) = b, 5 realloc(a, b) = c, 9 mark a.
//   cc -O2 -shared -fPIC malloc_log.c -o malloc_log.so
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <fcntl.h>
#include <errno.h>
extern void *__libc_malloc(size_t); extern void __libc_free(void *); extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t); extern void *__libc_memalign(size_t, size_t);
typedef struct { uint64_t op, a, b, c; } rec;
static rec *buf; static size_t n, cap = 50000000; static int on = 0;
static void put(uint64_t op, uint64_t a, uint64_t b, uint64_t c) {
  if (!on) return;
  if (!buf) { buf = mmap(0, cap * sizeof(rec), PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS|MAP_NORESERVE, -1, 0); }
  if (n < cap) { rec r = {op, a, b, c}; buf[n++] = r; }
}
void *malloc(size_t s) {
  if (s >= 987654000 && s < 987654400) { if (s == 987654000) on = 1; put(9, s - 987654000, 0, 0); return 0; }
  void *p = __libc_malloc(s); put(1, s, (uint64_t)p, 0); return p; }
void free(void *p) { if (p) put(2, (uint64_t)p, 0, 0); __libc_free(p); }
void *calloc(size_t a, size_t b) { void *p = __libc_calloc(a, b); put(4, a * b, (uint64_t)p, 0); return p; }
void *realloc(void *o, size_t s) { void *p = __libc_realloc(o, s); put(5, (uint64_t)o, s, (uint64_t)p); return p; }
int posix_memalign(void **r, size_t al, size_t s) { void *p = __libc_memalign(al, s); if (!p) return ENOMEM; *r = p; put(3, s, (uint64_t)p, al); return 0; }
void *memalign(size_t al, size_t s) { void *p = __libc_memalign(al, s); put(3, s, (uint64_t)p, al); return p; }
void *aligned_alloc(size_t al, size_t s) { void *p = __libc_memalign(al, s); put(3, s, (uint64_t)p, al); return p; }
__attribute__((destructor)) static void dump(void) {
  const char *f = getenv("MLOG_OUT"); if (!f || !buf) return;
  int fd = open(f, O_WRONLY|O_CREAT|O_TRUNC, 0644); size_t left = n * sizeof(rec); char *q = (char *)buf;
  while (left) { ssize_t w = write(fd, q, left); if (w <= 0) break; q += w; left -= w; } close(fd);
}
