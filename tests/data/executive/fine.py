import json

values = [3, 1, 4, 1, 5, 9, 2, 6]
mean = sum(values) / len(values)
with open("summary.txt", "w") as out:
    out.write(f"mean {mean}\n")
json.dump({"mean": mean, "n": len(values)}, open("metrics.json", "w"))
