// Forbidden: a folder of src/ that no CMake target is built from.
#pragma once
