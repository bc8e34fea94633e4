from imsdr.cli.app import main

main()
