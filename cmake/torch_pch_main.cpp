// The program that owns the precompiled <ATen/ATen.h> (cmake/torch_pch.cmake); never linked.
int main() { return 0; }
