from flashmark.cli import main

main()
