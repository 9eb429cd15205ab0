/* The bloat: a source under 1 kB whose build makes a program of 56 MB
   (an initialized array lands in the executable as it is). The build is
   refused for its size, before the server reads the program. */
char big[56 << 20] = {1};

int main(int argc, char **argv) {
    (void)argv;
    return big[argc << 20];
}
