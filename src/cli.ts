console.log("pi-context CLI: not yet built")
