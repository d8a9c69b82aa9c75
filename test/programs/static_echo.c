/* static_echo.c — a statically linked program: what `sobas` must say it cannot preload, and still run. */
#include <stdio.h>

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
  return argc > 1 ? 0 : 3;
}
