"""One module per CPython version: raw ``dis`` instructions -> the shared model in ``instructions``."""
