"""Describes a fixed sample: its size and mean."""
import json

values = [4.2, 3.9, 5.1, 4.8, 4.4]
with open("metrics.json", "w") as out:
    json.dump({"n": len(values), "mean": sum(values) / len(values)}, out)
with open("description.txt", "w") as out:
    out.write(f"{len(values)} values, mean {sum(values) / len(values):.2f}\n")
