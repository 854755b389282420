from rapgen.cli import main

main()
