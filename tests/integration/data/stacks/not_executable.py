print("not executable")
