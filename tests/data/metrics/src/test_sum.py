def total(n):
    return sum(range(n))

def test_total_small(benchmark):
    assert benchmark(total, 100) == 4950

def test_total_large(benchmark):
    assert benchmark(total, 10000) == 49995000
