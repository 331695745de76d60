print("carbridge: not built yet")
