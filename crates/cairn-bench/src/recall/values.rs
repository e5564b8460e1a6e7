//! The values facts take (pets, employers, cities, cars, advice, purchases ...) and the
//! synonyms paraphrased questions use instead of the words a fact was stated in.

/// (animal, another word for it).
pub const PETS: &[(&str, &str)] = &[
    ("dog", "puppy"),
    ("cat", "kitten"),
    ("rabbit", "bunny"),
    ("parrot", "bird"),
    ("tortoise", "reptile"),
    ("hamster", "rodent"),
];

pub const PET_NAMES: &[&str] = &[
    "Pickle", "Biscuit", "Mango", "Pepper", "Waffles", "Juniper", "Noodle", "Ziggy", "Olive",
    "Basil", "Truffle", "Marbles", "Socks", "Pretzel", "Clover", "Nacho",
];

pub const COMPANIES: &[&str] = &[
    "Northwind Logistics",
    "Brightleaf Studios",
    "Halvorsen Engineering",
    "Quayside Health",
    "Ostrander Books",
    "Copperline Energy",
    "Fennimore Labs",
    "Tidewater Insurance",
    "Greystone Architects",
    "Marlowe Foods",
    "Kestrel Aviation",
    "Pinecrest Software",
];

pub const ROLES: &[&str] = &[
    "project manager",
    "data analyst",
    "designer",
    "nurse",
    "translator",
    "sales lead",
    "engineer",
    "copywriter",
    "lab technician",
    "accountant",
];

/// (hobby as stated, a paraphrase-free label is not needed: the question names no hobby).
pub const HOBBIES: &[&str] = &[
    "pottery",
    "bouldering",
    "salsa dancing",
    "woodworking",
    "birdwatching",
    "fencing",
    "watercolour painting",
    "beekeeping",
    "choir singing",
    "archery",
    "sourdough baking",
];

pub const CITIES: &[&str] = &[
    "Lisbon", "Porto", "Valencia", "Ghent", "Utrecht", "Bologna", "Krakow", "Aarhus", "Bergen",
    "Leipzig", "Graz", "Tallinn", "Seville", "Lyon", "Galway", "Turin",
];

pub const CARS: &[&str] = &[
    "Volvo estate",
    "Fiat Panda",
    "Skoda Octavia",
    "Toyota Yaris",
    "Renault Clio",
    "Mazda MX-5",
    "Kia Niro",
    "Peugeot 208",
    "Subaru Forester",
    "Honda Jazz",
];

pub const PHONES: &[&str] = &[
    "Pixel",
    "Fairphone",
    "iPhone",
    "Galaxy",
    "Nokia",
    "Xperia",
    "Moto",
];

pub const GYMS: &[&str] = &[
    "Ironworks",
    "Pulse Fitness",
    "the Lido club",
    "Summit Climbing",
    "CoreHouse",
    "Flex Hall",
];

pub const SALONS: &[&str] = &[
    "Shear Luck",
    "the Cutting Room",
    "Fringe Benefits",
    "Mane Street",
    "Hair Apparent",
];

pub const CAFES: &[&str] = &[
    "Bean There",
    "the Copper Kettle",
    "Daily Grind",
    "Little Fox",
    "Brew Haven",
    "Marzipan",
];

/// (professional, another word for them, advice they gave).
pub const PROFESSIONALS: &[(&str, &str, &[&str])] = &[
    (
        "doctor",
        "physician",
        &[
            "cut down on caffeine and walk every morning",
            "take vitamin D through the winter",
            "get the mole on my shoulder checked yearly",
        ],
    ),
    (
        "dentist",
        "orthodontist",
        &[
            "floss twice a day and stop grinding at night",
            "wear a night guard for the clenching",
        ],
    ),
    (
        "plumber",
        "pipefitter",
        &[
            "replace the boiler valve before the frost",
            "stop pouring grease down the sink",
        ],
    ),
    (
        "mechanic",
        "garage man",
        &[
            "replace the brake pads before winter",
            "change the timing belt within six months",
        ],
    ),
    (
        "electrician",
        "wiring guy",
        &[
            "rewire the loft because the fuse box is ancient",
            "swap the bathroom fan for a sealed one",
        ],
    ),
    (
        "vet",
        "animal clinic",
        &[
            "switch to a grain free diet for the allergy",
            "trim the claws every fortnight",
        ],
    ),
    (
        "accountant",
        "bookkeeper",
        &[
            "keep every receipt in a separate folder",
            "pay tax in two instalments",
        ],
    ),
    (
        "physiotherapist",
        "back specialist",
        &[
            "stretch my hamstrings every evening",
            "stop running on concrete for a month",
        ],
    ),
    (
        "optician",
        "eye specialist",
        &[
            "wear the reading glasses for screens",
            "rest my eyes every twenty minutes",
        ],
    ),
    (
        "gardener",
        "landscaper",
        &[
            "prune the apple tree in late winter",
            "move the roses to the sunny side",
        ],
    ),
    (
        "lawyer",
        "attorney",
        &[
            "get the tenancy agreement in writing",
            "wait before signing the contract",
        ],
    ),
    (
        "pharmacist",
        "chemist",
        &[
            "take the antibiotics with food",
            "avoid ibuprofen with that medicine",
        ],
    ),
];

/// (item as stated, another word for it).
pub const ITEMS: &[(&str, &str)] = &[
    ("sofa", "couch"),
    ("bicycle", "bike"),
    ("laptop", "notebook computer"),
    ("kettle", "water boiler"),
    ("rug", "carpet"),
    ("lamp", "light fitting"),
    ("wardrobe", "closet"),
    ("armchair", "recliner"),
    ("mattress", "bed pad"),
    ("blender", "smoothie maker"),
    ("vacuum cleaner", "hoover"),
    ("tent", "camping shelter"),
    ("jacket", "coat"),
    ("watch", "wristwatch"),
    ("camera", "photo device"),
    ("backpack", "rucksack"),
    ("drill", "power tool"),
    ("printer", "copier"),
    ("bookshelf", "shelving unit"),
    ("television", "tv set"),
    ("guitar", "instrument"),
    ("suitcase", "luggage"),
    ("desk", "writing table"),
    ("heater", "radiator"),
];

pub const SHOPS: &[&str] = &[
    "Hartleys",
    "Lumen Home",
    "Okafor Brothers",
    "the flea market",
    "Brightmart",
    "Nordvik Outlet",
    "Castellan",
    "a shop in the old town",
    "Pemberton & Sons",
    "Vantage",
    "the charity shop",
    "Millbrook",
    "Quarry Lane Goods",
    "Tessaro",
];

/// (relative as stated, the question's word for them).
pub const RELATIONS: &[(&str, &str)] = &[
    ("sister", "sibling"),
    ("brother", "sibling"),
    ("cousin", "relative"),
    ("uncle", "relative"),
    ("aunt", "relative"),
    ("neighbour", "person next door"),
    ("flatmate", "housemate"),
    ("nephew", "relative"),
    ("niece", "relative"),
    ("godmother", "relative"),
];

pub const JOBS: &[&str] = &[
    "firefighter",
    "pilot",
    "vet",
    "carpenter",
    "midwife",
    "architect",
    "chef",
    "librarian",
    "paramedic",
    "journalist",
    "pharmacist",
    "surveyor",
    "florist",
    "dentist",
    "electrician",
];

/// (thing, another word for it, values).
pub const FAVOURITES: &[(&str, &str, &[&str])] = &[
    (
        "film",
        "movie",
        &[
            "Casablanca",
            "Spirited Away",
            "Paris Texas",
            "Amelie",
            "Heat",
        ],
    ),
    (
        "book",
        "novel",
        &["Middlemarch", "Stoner", "Rebecca", "Dune", "Beloved"],
    ),
    (
        "band",
        "musical group",
        &["Radiohead", "ABBA", "Portishead", "Talking Heads", "Bjork"],
    ),
    (
        "dish",
        "meal",
        &["paella", "ramen", "moussaka", "pierogi", "bibimbap"],
    ),
    (
        "season",
        "time of year",
        &["autumn", "spring", "winter", "summer"],
    ),
    (
        "painter",
        "artist",
        &["Vermeer", "Hokusai", "Kahlo", "Turner", "Hopper"],
    ),
    (
        "flower",
        "bloom",
        &["peonies", "tulips", "sunflowers", "lilies", "dahlias"],
    ),
    (
        "board game",
        "tabletop pastime",
        &["Carcassonne", "Catan", "Scrabble", "Azul", "chess"],
    ),
];

pub const DESTINATIONS: &[&str] = &[
    "Crete",
    "the Dolomites",
    "Edinburgh",
    "Kyoto",
    "Madeira",
    "the Lake District",
    "Vienna",
    "Sardinia",
    "Iceland",
    "Marrakech",
    "Copenhagen",
    "the Alps",
    "Lofoten",
    "Naples",
    "Budapest",
    "Corsica",
];

pub const HOTELS: &[&str] = &[
    "Blue Heron",
    "Hotel Aurora",
    "Casa Limon",
    "the Alder Lodge",
    "Villa Serena",
    "the Saltworks Inn",
    "Hotel Meridian",
    "the Granary",
    "Pension Edelweiss",
    "the Lantern",
    "Hotel Solstice",
    "the Old Mill",
    "Bayview House",
    "Hotel Cardamom",
    "the Wren",
    "Hotel Tamarind",
];

pub const RESTAURANTS: &[&str] = &[
    "Osteria Nonna",
    "the Brass Monkey",
    "Sakura Garden",
    "Le Petit Four",
    "the Fig Tree",
    "Taverna Kostas",
    "the Smokehouse",
    "Masala Lane",
    "the Oyster Bar",
    "Cafe Tbilisi",
];

pub const DECISIONS: &[&str] = &[
    "repaint the hallway green",
    "skip the wedding in Leeds",
    "split the rent differently",
    "adopt a rescue greyhound",
    "cancel the streaming subscriptions",
    "buy a bigger freezer",
    "host the family for the holidays",
    "sell the old piano",
    "start saving for a camper van",
    "take the night train next time",
    "plant an olive tree on the balcony",
    "learn Portuguese together",
    "move the book club to Thursdays",
    "rent an allotment",
    "give up the second car",
    "throw a surprise party for Dana",
    "redo the bathroom tiles",
    "join the running club",
];

/// (show, venue).
pub const OUTINGS: &[(&str, &str)] = &[
    ("Hamlet", "Globe Theatre"),
    ("The Nutcracker", "opera house"),
    ("a jazz quartet", "Blue Note"),
    ("a stand-up comedian", "Corn Exchange"),
    ("the Monet exhibition", "city gallery"),
    ("Swan Lake", "Royal Ballet"),
    ("a circus", "big top by the river"),
    ("an organ recital", "cathedral"),
    ("a puppet show", "little theatre"),
    ("a Bach concert", "concert hall"),
    ("the Pixar retrospective", "art cinema"),
    ("a flamenco show", "Teatro Real"),
    ("a poetry slam", "Red Lion"),
    ("Les Miserables", "Palace Theatre"),
];

/// (what was done as stated, as asked).
pub const EVENTS: &[(&str, &str)] = &[
    ("ran my first half marathon", "run a half marathon"),
    ("passed my driving test", "pass the driving test"),
    ("painted the kitchen ceiling", "paint the kitchen ceiling"),
    ("planted the tomato seedlings", "plant the tomato seedlings"),
    ("got my wisdom tooth out", "get the wisdom tooth out"),
    ("finished the quilt for my niece", "finish the quilt"),
    ("sold the old motorbike", "sell the old motorbike"),
    ("hiked up Ben Nevis", "hike up Ben Nevis"),
    ("renewed my passport", "renew the passport"),
    ("baked a wedding cake for Jo", "bake the wedding cake"),
    ("fixed the garden fence", "fix the garden fence"),
    ("gave a talk at the conference", "give the conference talk"),
    ("swam across the lake", "swim across the lake"),
    ("repaired the leaking roof", "repair the leaking roof"),
    ("got the keys to the allotment", "get the allotment keys"),
    ("adopted the two goldfish", "adopt the goldfish"),
    ("tiled the shower wall", "tile the shower wall"),
    ("donated blood for the first time", "donate blood"),
];

/// What a trip is for (the question names the trip by it; only the first turn says it).
pub const OCCASIONS: &[&str] = &[
    "our anniversary",
    "my fortieth",
    "the half term",
    "my cousin's wedding",
    "the Easter break",
    "my sister's hen party",
    "the ski week",
    "the bank holiday",
    "the honeymoon we never had",
    "the end of my contract",
];
