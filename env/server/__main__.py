from env.server.app import main

main()
