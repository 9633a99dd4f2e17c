from env.server.main import main

main()
