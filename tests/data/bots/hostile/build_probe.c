/* A build that tries to read the host at compile time: the preprocessor
   includes the build's own mounts (which would name the host's paths and
   the server's process id). The build sandbox has no /proc for C. */
#include "/proc/self/mountinfo"
int main(void) { return 0; }
