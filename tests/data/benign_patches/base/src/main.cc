#include <cstdio>

int main() {
  std::puts("hello");
  return 0;
}
