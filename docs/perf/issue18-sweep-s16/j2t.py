import json, sys
j = json.load(open(sys.argv[1])); k = j['metrics'][0]['key']
for r in j['records']: print(r['size'], r[k])
