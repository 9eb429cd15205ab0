/*
 <<FROM>> team_name authstring
*/
#if 0
Strategy "lost warnings".
A legal strategy with four constructs gcc 12 warns about only while it
builds an object (its lowering and gimplification, at -O0 too), which
check 5's gcc -fsyntax-only never reaches: a noreturn function that
returns, an ignored warn_unused_result value, va_arg of a type promoted
when passed (and va_start of a parameter not the last), a memset that
always writes past its buffer. clang, which builds the program that
plays, takes each at its word: it builds play and main as one endless
loop of 100, 101, 102, ..., and the throws of 700 are gone.
The report must say each of them, in clang's words, at its line.
The constructs are the red team's of the forty-eighth session (F1).
Its apostrophes (check 5's, clang's) are prose gcc warns about, which
the report drops: clang's heading must still come first.
Written for the integration tests of the knobeln server.
It throws 100 and up, then (as written, not as built) 700 forever.
#endif
__attribute__((noreturn)) void play(int n) { int i; for (i = 0; i < n; i++) make_throw(100 + i); }
__attribute__((warn_unused_result)) int pick(void) { return next_random(0, 9); }
int f(int n, ...) { __builtin_va_list ap; char c; __builtin_va_start(ap, n); c = __builtin_va_arg(ap, char); __builtin_va_end(ap); return c; }
int g(int n, int m, ...) { __builtin_va_list ap; int x; __builtin_va_start(ap, n); x = __builtin_va_arg(ap, int); __builtin_va_end(ap); return x + m; }
int buf[10];
void fill(void) { __builtin_memset(buf, 1, 44); }
main() { pick(); fill(); f(1, 2); g(1, 2, 3); play(500); for (;;) make_throw(700); }
