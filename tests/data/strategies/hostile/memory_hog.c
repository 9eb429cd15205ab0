/* Touches a 4 MB local array on the stack: beyond the 1024 kB limit. */
int hog(int n) { volatile char big[4 << 20]; int i, s = 0; for (i = 0; i < (int)sizeof big; i += 4096) big[i] = (char)(i + n); for (i = 0; i < (int)sizeof big; i += 4096) s += big[i]; return s & 1; }
main() { int t = 100; t += hog(0); for (;;) make_throw(t); }
