# Forgets to flush: print() to a pipe is block-buffered in Python.
import sys

for line in sys.stdin:
    if line.startswith("END"):
        break
    print(line.split()[1])
