/* Touches a 4 MB local array on the stack: beyond the 1024 kB limit. */
int hog(int n) { volatile char big[4 << 20]; big[n] = 1; big[sizeof big - 1] = 2; return big[n]; }
main() { int t = 100; t += hog(0); for (;;) make_throw(t); }
