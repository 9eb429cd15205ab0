/*
 <<FROM>> team_name authstring
*/
#if 0
Strategy "a huge type".
A legal strategy whose one comparison of two distinct pointer types
(gcc and clang both warn) names a type of a chain of typedefs, each
doubling the one before: clang writes that type in full in its warning,
2^16 parts of it, 15 s of CPU and 900 MB where it formats the warning.
The build that plays says no warning (-w) and the run for the report's
words says only the allowlist's (-Wno-everything), so the program is
accepted in the time of any other, and the result of pick() it
ignores is said at its line (38), after the comparison. Red team F1 of the forty-ninth session:
rejected then, with words about static data it does not have.
Written for the integration tests of the knobeln server.
It throws 1 forever (two null pointers compare equal).
#endif
__attribute__((noreturn)) void stop(int r) { for (;;) make_throw(r); }
__attribute__((warn_unused_result)) int pick(void) { return 1; }
typedef int (*F0)(int, int);
typedef F0 (*F1)(F0, F0);
typedef F1 (*F2)(F1, F1);
typedef F2 (*F3)(F2, F2);
typedef F3 (*F4)(F3, F3);
typedef F4 (*F5)(F4, F4);
typedef F5 (*F6)(F5, F5);
typedef F6 (*F7)(F6, F6);
typedef F7 (*F8)(F7, F7);
typedef F8 (*F9)(F8, F8);
typedef F9 (*F10)(F9, F9);
typedef F10 (*F11)(F10, F10);
typedef F11 (*F12)(F11, F11);
typedef F12 (*F13)(F12, F12);
typedef F13 (*F14)(F13, F13);
typedef F14 (*F15)(F14, F14);
F15 p; int (*q)(void);
main(){ int r = 0; r += p == q;
 pick();
 stop(r); }
