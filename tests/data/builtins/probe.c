/* Every builtin a strategy may name (src/toolchain/builtins.rs), each in
 * an expression whose value and type the test
 * builtins_on_the_list_mean_the_same_to_gcc_and_clang compares between gcc
 * (x86-64, run natively) and the clang that builds the module (run as a
 * strategy). probe(v, z) fills v with pairs (value, type code) and returns
 * how many numbers it wrote; z is 0 at run time and unknown to the
 * compilers (read from a volatile). Where a value or a type depends on the
 * width of long (64 bits on x86-64, 32 on wasm32: the machine's, not the
 * builtin's meaning), the expression measures it by sizeof. No #include:
 * the text is a strategy's. */

/* The type of an expression, as a number (0: none of these). */
#define T(e) (__builtin_types_compatible_p(__typeof__(e), int) ? 1 \
  : __builtin_types_compatible_p(__typeof__(e), unsigned int) ? 2 \
  : __builtin_types_compatible_p(__typeof__(e), long) ? 3 \
  : __builtin_types_compatible_p(__typeof__(e), unsigned long) ? 4 \
  : __builtin_types_compatible_p(__typeof__(e), long long) ? 5 \
  : __builtin_types_compatible_p(__typeof__(e), unsigned long long) ? 6 \
  : __builtin_types_compatible_p(__typeof__(e), _Bool) ? 7 \
  : __builtin_types_compatible_p(__typeof__(e), unsigned short) ? 8 \
  : __builtin_types_compatible_p(__typeof__(e), void *) ? 9 \
  : __builtin_types_compatible_p(__typeof__(e), void) ? 10 : 0)
/* The size and signedness of an unsigned 64-bit type (uint64_t is unsigned
 * long on x86-64, unsigned long long on wasm32). */
#define S(e) (100 + sizeof(e) * 2 + ((__typeof__(e))-1 < 0))
#define LONG_BITS ((int)(8 * sizeof(long)))
#define R(val, code) (v[n] = (long long)(val), v[n + 1] = (code), n += 2)
#define O(call, ok) (ovf = (call), R(ovf * 2 + (ok), T(call)))

/* A read the compilers can never prove constant (after `if (z) trap` gcc
 * knows z is 0, so __builtin_constant_p(z) would be the optimiser's). */
static volatile int unknown;

struct place { char c; int i; short h; char d[3]; int j; };

static __inline__ int twice(int *__restrict p) { return 2 * *p; }
static __inline int thrice(int *__restrict__ p) { return 3 * *p; }
static _Noreturn void stop(void) { __builtin_trap(); }

static int sum(int count, ...)
{
  __builtin_va_list ap, aq;
  int s = 0, i;
  __builtin_va_start(ap, count);
  __builtin_va_copy(aq, ap);
  for (i = 0; i < count; i++)
    s += __builtin_va_arg(ap, int) * (i + 1);
  s += 1000 * __builtin_va_arg(aq, int);
  __builtin_va_end(aq);
  __builtin_va_end(ap);
  return s;
}

static int probe(long long *v, int z)
{
  int n = 0, ovf, r;
  unsigned u = 0xF0F1u + z;
  unsigned long ul = 0x8F0F1ul + z;
  unsigned long long ull = 0x80F0F0F000000010ull + z;
  int neg = -5 - z;
  long nl = -7L - z;
  long long nll = -9LL - z;
  long rl;
  long long rll;
  unsigned ru;
  unsigned long rul;
  unsigned long long rull;
  char a[8] = "knobeln", b[8] = "1994abc";

  if (z)
    __builtin_trap();
  R(0, T(__builtin_trap()));
  if (z > 5)
    __builtin_unreachable();
  R(0, T(__builtin_unreachable()));
  R(__builtin_expect(u, 1), T(__builtin_expect(u, 1)));
  R(__builtin_constant_p(12) * 2 + __builtin_constant_p(unknown), T(__builtin_constant_p(12)));
  R(__builtin_types_compatible_p(__typeof__(u), unsigned) * 2
      + __builtin_types_compatible_p(int, long), T(__builtin_types_compatible_p(int, int)));
  R(__builtin_choose_expr(sizeof(int) == 4, neg, nl),
    T(__builtin_choose_expr(sizeof(int) == 4, neg, nl)));
  R(__builtin_offsetof(struct place, j), T(__builtin_offsetof(struct place, j)));

  R(__builtin_popcount(u), T(__builtin_popcount(u)));
  R(__builtin_popcountl(ul), T(__builtin_popcountl(ul)));
  R(__builtin_popcountll(ull), T(__builtin_popcountll(ull)));
  R(__builtin_clz(u), T(__builtin_clz(u)));
  R(__builtin_clzl(ul) - LONG_BITS, T(__builtin_clzl(ul)));
  R(__builtin_clzll(ull), T(__builtin_clzll(ull)));
  R(__builtin_ctz(u << 3), T(__builtin_ctz(u)));
  R(__builtin_ctzl(ul << 3), T(__builtin_ctzl(ul)));
  R(__builtin_ctzll(ull), T(__builtin_ctzll(ull)));
  R(__builtin_ffs(u << 2), T(__builtin_ffs(u)));
  R(__builtin_ffsl(ul << 2), T(__builtin_ffsl(ul)));
  R(__builtin_ffsll(ull), T(__builtin_ffsll(ull)));
  R(__builtin_parity(u), T(__builtin_parity(u)));
  R(__builtin_parityl(ul), T(__builtin_parityl(ul)));
  R(__builtin_parityll(ull), T(__builtin_parityll(ull)));
  R(__builtin_clrsb(neg), T(__builtin_clrsb(neg)));
  R(__builtin_clrsbl(nl) - LONG_BITS, T(__builtin_clrsbl(nl)));
  R(__builtin_clrsbll(nll), T(__builtin_clrsbll(nll)));
  R(__builtin_bswap16((unsigned short)(0x1234 + z)), T(__builtin_bswap16(0)));
  R(__builtin_bswap32(u), T(__builtin_bswap32(u)));
  R(__builtin_bswap64(ull), S(__builtin_bswap64(ull)));
  R(__builtin_abs(neg), T(__builtin_abs(neg)));
  R(__builtin_labs(nl), T(__builtin_labs(nl)));
  R(__builtin_llabs(nll), T(__builtin_llabs(nll)));

  R((__builtin_memcpy(b, a, 4), b[0] + 256 * b[3]), T(__builtin_memcpy(b, a, 4)));
  R((__builtin_memset(b + 4, 'x' + z, 2), b[5] + 256 * b[6]), T(__builtin_memset(b, 0, 1)));
  R((__builtin_memmove(a + 1, a, 5), a[3] + 256 * a[5]), T(__builtin_memmove(a, a, 1)));
  R((__builtin_memcmp(a, b, 8) > 0) - (__builtin_memcmp(a, b, 8) < 0),
    T(__builtin_memcmp(a, b, 8)));
  R(__builtin_memcmp(a, a, 8 + z), 1);

  O(__builtin_add_overflow(0x7fffffff - z, 1, &r), r == -0x7fffffff - 1);
  O(__builtin_sub_overflow(neg, 3, &r), r == -8);
  O(__builtin_mul_overflow(100000 + z, 100000, &r), r == 1410065408);
  O(__builtin_sadd_overflow(0x7fffffff - z, 1, &r), r == -0x7fffffff - 1);
  O(__builtin_saddl_overflow(nl, nl, &rl), rl == -14);
  O(__builtin_saddll_overflow(nll, nll, &rll), rll == -18);
  O(__builtin_ssub_overflow(neg, 0x7fffffff, &r), r == 0x7ffffffc);
  O(__builtin_ssubl_overflow(nl, 1, &rl), rl == -8);
  O(__builtin_ssubll_overflow(nll, 1, &rll), rll == -10);
  O(__builtin_smul_overflow(neg, 3, &r), r == -15);
  O(__builtin_smull_overflow(nl, 3, &rl), rl == -21);
  O(__builtin_smulll_overflow(nll, 3, &rll), rll == -27);
  O(__builtin_uadd_overflow(~0u - z, 2u, &ru), ru == 1);
  O(__builtin_uaddl_overflow(~0ul - z, 2ul, &rul), rul == 1);
  O(__builtin_uaddll_overflow(~0ull - z, 2ull, &rull), rull == 1);
  O(__builtin_usub_overflow(1u + z, 2u, &ru), ru == ~0u);
  O(__builtin_usubl_overflow(1ul + z, 2ul, &rul), rul == ~0ul);
  O(__builtin_usubll_overflow(1ull + z, 2ull, &rull), rull == ~0ull);
  O(__builtin_umul_overflow(~0u - z, 2u, &ru), ru == ~0u - 1);
  O(__builtin_umull_overflow(~0ul - z, 2ul, &rul), rul == ~0ul - 1);
  O(__builtin_umulll_overflow(~0ull - z, 2ull, &rull), rull == ~0ull - 1);

  R(sum(3, 10 + z, 20, 30), T(sum(0)));

  /* The reserved names a strategy may write besides the builtins
   * (KEYWORDS in src/toolchain/builtins.rs), each in use. */
  {
    __label__ done;
    static _Thread_local int tl = 7;
    static __thread int th = 1;
    _Alignas(8) _Atomic int at = 2 + z;
    _Complex int ci = 3 + z;
    __complex__ int cj = 4 + z;
    __extension__ __const __volatile__ __signed__ int q __attribute__((unused)) = -4 + z;
    __const__ __volatile __signed int q2 __attribute((unused)) = -1 + z;
    __int128 w = ((__int128)(5 + z) << 70) >> 70;
    __int128_t w2 = -w;
    __uint128_t w3 = (__uint128_t)w2 >> 120;
    __typeof(q) q3 = twice(&tl) + thrice(&th) - 3;
    _Static_assert(sizeof(_Bool) == 1, "bool");
    if (z)
      stop();
    if (z)
      goto done;
    R(tl + th + at + q + q2 + q3, T(tl + q + q3));
    R(__real__ ci + 10 * __imag__ ci + 100 * __real cj + 1000 * __imag cj, T(__real__ ci));
    R((int)sizeof(__int128) + 100 * (int)_Alignof(__int128) + 10000 * (int)__alignof__(__int128_t)
      + 1000000 * (int)__alignof(__uint128_t), 1);
    R(w + w2 + (long long)w3, 5);
    R(_Generic(z, int: 1, default: 2) + 10 * _Generic(w, __int128: 1, default: 2), T(_Generic(z, int: 1, default: 2)));
    R(__FUNCTION__[0] + 256 * (int)sizeof(__func__) + 65536 * (__func__[4] == 'e'), 1);
  done:;
  }
  return n;
}
