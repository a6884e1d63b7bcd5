def f(m, n):
    steps = 0
    while m % 2 == n % 2 == 0 and steps < 5:
        m //= 2
    return m
