/* Declares a function of another module (WASI's proc_exit) to reach the
   host directly: the attribute is refused at check 2; built without the
   checks, the module imports it and the referee refuses to start it. */
__attribute__((import_module("wasi_snapshot_preview1"), import_name("proc_exit"))) void leave(int code);
main() { make_throw(100); leave(0); for (;;) make_throw(100); }
