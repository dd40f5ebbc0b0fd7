# Sourced by the load scripts: `login EMAIL` logs in through the portal's form at "$base" (the
# demo password), keeping the cookie jar under "$work", and prints the session cookie
# (`tacho_session=…`) for wrk's `-H "Cookie: …"`.
login() {
  local jar="$work/$1.jar" token
  token=$(curl -s -c "$jar" -b "$jar" "$base/portal/login" | grep -o 'name="csrf" value="[0-9a-f]*"' | head -1 | sed 's/.*value="//; s/"//')
  curl -s -c "$jar" -b "$jar" -o /dev/null -d "csrf=$token&email=$1&password=tacho-demo" "$base/portal/login"
  awk '$6 == "tacho_session" { print "tacho_session=" $7 }' "$jar"
}
