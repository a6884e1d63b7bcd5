def f(m, n):
    steps = 0
    while m % 2 == n % 2 == 0 and steps < 5:
        m //= 2
        n //= 2
        steps += 1
    while m % 5 == n % 5 == 0:
        m //= 5
        n //= 5
    return m, n, steps
